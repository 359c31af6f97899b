/** Shard 2 of the random tidy histories (random.ts says what they check and how to run one again). */
import { tidyShard } from './random.js';

tidyShard(1);

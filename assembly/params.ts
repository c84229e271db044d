// The configuration's parameter region: f64 values the TS side writes at paramsPtr(), one per
// option (fields P_* in abi.ts; their defaults are DEFAULTS in src/core/options.ts, the only
// place they are written), read by the configure functions of each module.

import { PARAMS_SIZE } from "./abi";

export const PARAMS: usize = memory.data(<i32>PARAMS_SIZE, 16);

/** A configuration parameter (abi.ts P_*) as written at PARAMS. */
// @ts-ignore: decorator
@inline export function param(at: usize): f64 { return load<f64>(PARAMS + at); }
/** The same, as an integer (integers and flags are written as f64 too). */
// @ts-ignore: decorator
@inline export function intParam(at: usize): i32 { return <i32>load<f64>(PARAMS + at); }

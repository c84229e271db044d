// The part of the WebAssembly JS API this package uses. @types/node 20 does not declare it,
// and the DOM lib would bring in far more than exists in Node.
declare namespace WebAssembly {
  class Module {
    constructor(bytes: BufferSource);
  }
  class Instance {
    constructor(module: Module, imports?: Record<string, Record<string, unknown>>);
    readonly exports: Record<string, unknown>;
  }
  class Memory {
    readonly buffer: ArrayBuffer;
    grow(deltaPages: number): number;
  }
}
type BufferSource = ArrayBufferView | ArrayBuffer;

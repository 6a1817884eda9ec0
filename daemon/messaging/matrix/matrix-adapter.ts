export const matrixFactory = null as unknown as import("../adapter.js").AdapterFactory;

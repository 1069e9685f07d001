import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { containsTritonKernel } from '../../src/triton';

describe('containsTritonKernel', () => {
    it('finds a jitted kernel', () => {
        assert.ok(containsTritonKernel('import triton\nimport triton.language as tl\n\n@triton.jit\ndef k(x):\n    pass\n'));
    });
    it('finds autotuned kernels and from-imports', () => {
        assert.ok(containsTritonKernel('from triton import jit\n@jit\ndef k(x): pass\n'));
        assert.ok(containsTritonKernel('import triton\n@triton.autotune(configs=[], key=[])\n@triton.jit\ndef k(x): pass\n'));
    });
    it('ignores plain Python and mentions in strings', () => {
        assert.ok(!containsTritonKernel('import torch\n\ndef f(x):\n    return x\n'));
        assert.ok(!containsTritonKernel('s = "import triton"\n@functools.cache\ndef f(): pass\n'));
        assert.ok(!containsTritonKernel('import tritonclient\n@triton.jit\n'));
    });
    it('needs a kernel, not just an import', () => {
        assert.ok(!containsTritonKernel('import triton\nprint(triton.__version__)\n'));
    });
});

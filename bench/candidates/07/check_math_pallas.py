"""CPU checks for the 07_paged_gqa_decode Pallas candidates (run with /usr/bin/python3, from any directory:
torch on the CPU, no JAX, no GPU).

Each solution's own code (solve, jit body, block specs, index maps, both kernels) runs through
../pallas_standin.py, a torch stand-in for the JAX and Pallas calls that runs every grid program in turn. This script
extends the stand-in without editing it: refs check that every index, `pl.ds` slice and gathered row lies inside the
block (the Triton lowering's loads are unmasked) and accept integer vectors as gather indices (as `ref[rows, ...]`
does in Pallas); `jnp.max`, `jnp.full` and an int32 `bitcast_convert_type` are added.

Draws, all at the problem's full size (64 sequences, 8 query heads, 1 KV head, 16,384 pages of 16, 256 pages each):
  plain     make_inputs under a fixed seed;
  outliers  the same with the grader's outlier rule on q, k_cache, v_cache (0.1% of elements -> N(0,1) x 50);
            informational in the grader;
  edges     lengths 1, 15, 16, 17, 255, 256, 257, ... 4096 (empty slices, partial first and last pages), and every
            slot at or past a sequence's length poisoned (keys 50, values 1000) so that a masking slip is visible.
Each output is compared with the float64 anchor (the reference on float64 inputs) under the grader's allowance,
3 x max(ref_err, eps(bf16) x max|anchor|), where ref_err is the reference's own float32-then-bf16 error. Also checked:
inputs unmodified, v2 bit-identical to v1 (its packing and the int32 round trip), the grader's static compliance,
and, on the edges draw, that five deliberate slips in v1's code (MUTANTS) each fail the same comparison.
The shipped solution goes through the same stand-in on the plain draw as a control (--shipped-all: every draw).
This proves the math, the indexing and the packing offsets, not JAX's tracing, the Triton lowering, XLA or timing."""

import argparse
import importlib.util
import json
import os
import sys
import tempfile
import time
import types

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.dirname(HERE))  # bench/candidates, for pallas_standin.py
sys.path.insert(0, os.path.join(REPO, "core", "grader"))  # mkbgrader, for the static compliance check
import pallas_standin as standin  # noqa: E402

EPS_BF16 = 0.0078125
MUTANTS = [  # (what, text in v1, replacement): each must fail the edges draw, showing the check can see that slip
    ("mask off by one", "position < length, scores", "position <= length, scores"),
    ("one page short", "(length + PAGE - 1) // PAGE", "(length + PAGE - 2) // PAGE"),
    ("query rows not wrapped", "heads = jnp.where(rows < group, rows, rows - group)", "heads = rows"),
    ("slices merged unweighted", "jnp.exp(lse - jnp.max(lse))", "jnp.exp(lse - jnp.max(lse)) * 0.0 + 1.0"),
    ("partials not normalised", "o_ref[...] = acc / safe[:, None]", "o_ref[...] = acc"),
]
EDGE_LENGTHS = [1, 2, 15, 16, 17, 31, 32, 33, 255, 256, 257, 1023, 1024, 1025, 2047, 2048, 2049, 4079, 4080, 4081,
                4095, 4096]


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ----- stand-in extensions (the stand-in itself is not edited) -----------------------------------------------------
def _component(item, extent):
    """One index component, bounds-checked: an int, a slice (from pl.ds or ':'), or an integer vector (a gather)."""
    if isinstance(item, torch.Tensor):
        if item.dim() == 0:
            item = int(item)
        else:
            assert not item.is_floating_point(), item.dtype
            assert int(item.min()) >= 0 and int(item.max()) < extent, (int(item.min()), int(item.max()), extent)
            return item.long()
    if isinstance(item, slice):
        start, stop = item.start or 0, extent if item.stop is None else item.stop
        assert item.step in (None, 1) and 0 <= start <= stop <= extent, (start, stop, extent)
        return slice(start, stop)
    if item is Ellipsis:
        return item
    assert 0 <= int(item) < extent, (int(item), extent)
    return int(item)


def _checked_index(self, idx):
    idx = idx if isinstance(idx, tuple) else (idx,)
    if idx == (Ellipsis,):
        return idx
    assert Ellipsis not in idx and len(idx) <= len(self.shape), (idx, self.shape)
    return tuple(_component(item, extent) for item, extent in zip(idx, self.shape))


def _bitcast_convert_type(x, dtype):
    bits = lambda d: (torch.finfo(d) if d.is_floating_point else torch.iinfo(d)).bits  # noqa: E731
    width_in, width_out = bits(x.dtype), bits(dtype)
    if width_in == width_out:
        return x.view(dtype)
    assert width_out > width_in and x.shape[-1] == width_out // width_in, (tuple(x.shape), dtype)
    return x.contiguous().view(dtype).squeeze(-1)


class _Float32:
    """jnp.float32 for the shipped control, which calls it (jnp.float32(NEG)) as well as passing it as a dtype."""

    def __call__(self, value):
        return torch.tensor(value, dtype=torch.float32)


def _dtype(dtype):
    return torch.float32 if isinstance(dtype, _Float32) else dtype


def shipped_numpy():
    """The stand-in's jax.numpy with a callable float32, bound as the shipped module's `jnp` only."""
    jnp = types.SimpleNamespace(**vars(sys.modules["jax.numpy"]))
    jnp.float32 = _Float32()
    jnp.zeros = lambda shape, dtype: torch.zeros(shape, dtype=_dtype(dtype))
    return jnp


def install():
    standin.install()
    standin.Ref._index = _checked_index
    jnp, lax = sys.modules["jax.numpy"], sys.modules["jax.lax"]
    jnp.max = lambda x, axis=None: x.max() if axis is None else x.amax(axis)
    jnp.full = lambda shape, value, dtype: torch.full(shape, value, dtype=dtype)
    lax.bitcast_convert_type = _bitcast_convert_type
    torch.Tensor.astype = lambda self, dtype: self.to(_dtype(dtype))


# ----- draws -------------------------------------------------------------------------------------------------------
def inject_outliers(inputs, positions, seed, p=0.001, scale=50.0):
    """The grader's outlier draw (core/grader/mkbgrader/child/outliers.py), on the CPU."""
    for position in positions:
        tensor = inputs[position]
        generator = torch.Generator().manual_seed(seed + position)
        mask = torch.rand(tensor.numel(), generator=generator) < p
        index = mask.nonzero().reshape(-1)
        noise = torch.randn(index.numel(), generator=generator, dtype=torch.float32) * scale
        tensor.view(-1).index_copy_(0, index, noise.to(tensor.dtype))


def edge_draw(problem, seed):
    torch.manual_seed(seed)
    q, k_cache, v_cache, block_table, seq_lens = problem.make_inputs(device="cpu")
    batch, pages_per_seq = block_table.shape
    page = k_cache.shape[1]
    seq_lens = torch.tensor([EDGE_LENGTHS[b % len(EDGE_LENGTHS)] for b in range(batch)], dtype=torch.int32)
    for b in range(batch):
        length = int(seq_lens[b])
        for index in range(length // page, pages_per_seq):  # stale slots: from the first one at or past length
            first = length - index * page if index * page < length else 0
            k_cache[int(block_table[b, index]), first:] = 50.0
            v_cache[int(block_table[b, index]), first:] = 1000.0
    return [q, k_cache, v_cache, block_table, seq_lens]


def verdict(name, out, ref, anchor, seconds, inputs_ok):
    finite = torch.isfinite(ref)
    cand_err = (out.double() - anchor)[finite].abs().max().item()
    ref_err = (ref.double() - anchor)[finite].abs().max().item()
    allowance = 3.0 * max(ref_err, EPS_BF16 * anchor[finite].abs().max().item())
    same_nonfinite = bool((torch.isfinite(out) == finite).all())
    ok = (cand_err == cand_err and cand_err <= allowance and out.dtype == ref.dtype and out.shape == ref.shape
          and same_nonfinite and inputs_ok)
    print(f"  {name:18s} err {cand_err:.3e}  ref_err {ref_err:.3e}  allowance {allowance:.3e}  "
          f"{cand_err / allowance:.2f} of it  inputs {'unchanged' if inputs_ok else 'MODIFIED'}  "
          f"{'PASS' if ok else 'FAIL'}  ({seconds:.1f} s)", flush=True)
    return ok


def mutant_checks(v1_path, inputs, ref, anchor):
    """v1 with one deliberate slip each, through the same stand-in: every one must fail (or trip an assertion)."""
    with open(v1_path) as handle:
        source = handle.read()
    ok = True
    with tempfile.TemporaryDirectory() as folder:
        for n, (what, old, new) in enumerate(MUTANTS):
            assert source.count(old) == 1, what
            path = os.path.join(folder, f"mutant{n}.py")
            with open(path, "w") as handle:
                handle.write(source.replace(old, new))
            try:
                out = load(path, f"mutant07_{n}").solve(*[t.clone() for t in inputs])
                err = (out.double() - anchor).abs().max().item()
                ref_err = (ref.double() - anchor).abs().max().item()
                allowance = 3.0 * max(ref_err, EPS_BF16 * anchor.abs().max().item())
                caught = not err <= allowance
                result = f"err {err:.3e}, {err / allowance:.1f} x the allowance"
            except AssertionError as error:
                caught, result = True, f"stand-in assertion {error!r}"
            print(f"  mutant '{what}': {result}  {'caught' if caught else 'NOT CAUGHT'}", flush=True)
            ok &= caught
    return ok


def static_checks(paths):
    from mkbgrader.parent import compliance_static
    with open(os.path.join(REPO, "resources", "dsls", "pallas.json")) as handle:
        descriptor = json.load(handle)
    ok = True
    for path in paths:
        with open(path) as handle:
            source = handle.read()
        finding = compliance_static.check_source(source, descriptor, 300_000)
        long_lines = [n + 1 for n, line in enumerate(source.splitlines()) if len(line) >= 120]
        print(f"  {os.path.basename(path):12s} static compliance: {finding or 'clean'}; "
              f"lines of 120+ characters: {long_lines or 'none'}")
        ok &= finding is None and not long_lines
    return ok


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shipped-all", action="store_true", help="run the shipped control on every draw")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads (default 1: a shared host)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    problem = load(os.path.join(REPO, "problems/attention/07_paged_gqa_decode.py"), "problem07")
    install()
    shipped = os.path.join(REPO, "problems/attention/_solutions/07_paged_gqa_decode.pallas.py")
    candidates = [os.path.join(HERE, f"v{n}.pallas.py") for n in (1, 2)]
    print("static checks")
    all_ok = static_checks(candidates)
    modules = [("shipped (control)", load(shipped, "shipped07"))]
    modules[0][1].jnp = shipped_numpy()
    modules += [(f"v{n}", load(path, f"candidate07_{n}")) for n, path in zip((1, 2), candidates)]
    draws = [("plain", 0), ("outliers", 1), ("edges", 2)]
    for draw, seed in draws:
        if draw == "edges":
            inputs = edge_draw(problem, seed)
        else:
            torch.manual_seed(seed)
            inputs = problem.make_inputs(device="cpu")
            if draw == "outliers":
                inject_outliers(inputs, problem.MKB_META["outliers"]["inputs"], seed=1234)
        lens = inputs[4]
        print(f"draw {draw}: shapes {[tuple(t.shape) for t in inputs]}, lengths {int(lens.min())}-{int(lens.max())}",
              flush=True)
        anchor = problem.reference(*[t.double() if t.is_floating_point() else t for t in inputs])
        ref = problem.reference(*inputs)
        print(f"  max|anchor| {anchor.abs().max().item():.3e}", flush=True)
        outputs = {}
        for name, module in modules:
            if name.startswith("shipped") and draw != "plain" and not args.shipped_all:
                continue
            copies = [t.clone() for t in inputs]
            start = time.time()
            out = module.solve(*copies)
            inputs_ok = all(torch.equal(a, b) for a, b in zip(copies, inputs))
            outputs[name] = out
            all_ok &= verdict(name, out, ref, anchor, time.time() - start, inputs_ok)
        same = torch.equal(outputs["v1"], outputs["v2"])
        print(f"  v2 output bit-identical to v1: {same}", flush=True)
        all_ok &= same
        if draw == "edges":
            all_ok &= mutant_checks(candidates[0], inputs, ref, anchor)
    print("ALL PASS" if all_ok else "SOME FAILED")
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())

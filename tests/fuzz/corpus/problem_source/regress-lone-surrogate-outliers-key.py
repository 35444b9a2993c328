"""T."""
MKB_META = {"outliers": {"\udf00": 0}}

def reference(x): return x
def make_inputs(device="cuda"): return [0]

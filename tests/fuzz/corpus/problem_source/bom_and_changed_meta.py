"""With a byte-order mark."""
MKB_META = {}
MKB_META["tags"] = ["late"]

def reference(x): return x
def make_inputs(device="cuda"): return [0]

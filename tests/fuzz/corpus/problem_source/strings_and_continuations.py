r'''Strings of every kind: raw, bytes, triple-quoted, escaped \n, and lines joined by backslashes.'''
import torch  # a comment with "quotes" and 'apostrophes'

MKB_META = {"tags": ("a\tb", 'c\'d', """e
f""", r"\x", "\u00e9\N{BULLET}"), "quant": True, "outliers": "off", "flops": None}

NOT_META = b"bytes" + rb'\raw' + f"{1 + 2}" \
    + "tail"


class Helper:
    def reference(self):  # not module level
        return [1, 2,
                3]


def reference(*inputs):
    return sum(inputs)


async def make_inputs(device="cuda"):
    return [torch.ones(1, device=device)]

"""What a labkit engine answers where the stored answer is llama.cpp's: ids, or "abort" where
llama.cpp ends its process (labkit must then raise a LabkitError that says so)."""
from __future__ import annotations

import labkit


def llama_cpp_ids(tok: labkit.Tokenizer, text: str, add: bool = False) -> list[int] | str:
    """The ids with parse_special off (add_special_tokens as ``add``), or "abort"."""
    try:
        return tok.encode(text, add_special_tokens=add, parse_special=False).ids
    except labkit.LabkitError as exc:
        assert "llama.cpp" in str(exc)
        return "abort"

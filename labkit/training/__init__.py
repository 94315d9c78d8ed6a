"""Where vocabularies come from and how segmentations are sampled: the Unigram trainer (EM and
pruning), n-best and sampling over the Unigram lattice, and BPE-dropout.

These sit above the readers and the factory (they load the vocabularies they train against or
sample from); the pure algorithms they use live in ``labkit/algorithms/``.
Introduced in notebook ``13_where_vocabularies_come_from``.
"""

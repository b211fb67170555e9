"""z3 proofs that properties (with strengthening lemmas) are inductive for the models' symbolic encodings."""

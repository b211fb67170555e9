"""Counterexamples: the Trace type, its readable text, ITF JSON, replay on the model and shrinking."""

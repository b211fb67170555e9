"""Trace validation: is a run of impl/ (its event logs) a behaviour the model allows?"""

"""The parts of ember.utils.benchmark: common (TaskSpec, Measurement), timer (Timer), compare (Compare)."""

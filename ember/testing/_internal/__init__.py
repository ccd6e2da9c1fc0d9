"""torch.testing._internal: the pieces of torch's own test harness that libraries' test suites import."""

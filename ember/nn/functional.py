"""ember.nn.functional: generated operator functions (nn=True in the table) plus composites."""

"""A character-level GPT on Tiny Shakespeare, in ordinary PyTorch style (the model lives in ember/demo.py,
which is written with `import ember as torch`). Same as `ember demo`.

    python examples/char_gpt.py --minutes 3
"""
import sys

from ember.demo import main

if __name__ == '__main__':
    sys.exit(main())

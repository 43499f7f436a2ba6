import os
os.rename("a", "d/a")

import shutil
shutil.move("a", "d/a")

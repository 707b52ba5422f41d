import time


def double(x):
    time.sleep(3)
    return x * 2

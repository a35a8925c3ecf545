print("granary: not yet")

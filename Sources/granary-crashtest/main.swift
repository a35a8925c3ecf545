print("crashtest: not yet")

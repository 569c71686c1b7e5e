print("lightstreamer: not built yet")

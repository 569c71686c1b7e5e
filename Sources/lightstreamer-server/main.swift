print("lightstreamer-server: not built yet")

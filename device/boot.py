# Runs before main.py. Nothing to do: the firmware configures its peripherals itself.

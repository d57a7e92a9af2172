# Board entry point: start the firmware (sotto_fw.app builds the peripherals and tasks).
from sotto_fw import app

app.main()

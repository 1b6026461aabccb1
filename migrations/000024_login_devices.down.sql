DROP TABLE IF EXISTS login_devices;

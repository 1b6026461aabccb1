DROP TABLE health_probe;

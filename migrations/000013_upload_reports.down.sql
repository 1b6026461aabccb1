DROP TABLE IF EXISTS upload_reports;

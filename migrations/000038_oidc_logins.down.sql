DROP TABLE IF EXISTS oidc_logins;

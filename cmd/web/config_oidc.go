package main

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/closer-lab/closer/internal/web"
)

// oidcFromEnv reads single sign-on's settings (issue 30): OIDC_ISSUER,
// OIDC_CLIENT_ID, OIDC_CLIENT_SECRET, OIDC_ALLOWED_DOMAINS (comma
// separated; empty: any), OIDC_NAME (the button's), and PASSWORD_LOGIN
// (on, the default, or off: only with OIDC set). Without OIDC_ISSUER
// there is no single sign-on.
func oidcFromEnv(getenv func(string) string) (oidc *web.OIDCConfig, noPassword bool, errs []error) {
	issuer := strings.TrimSpace(getenv("OIDC_ISSUER"))
	switch pl := strings.ToLower(strings.TrimSpace(getenv("PASSWORD_LOGIN"))); pl {
	case "", "on", "true", "1":
	case "off", "false", "0":
		noPassword = true
	default:
		errs = append(errs, fmt.Errorf("PASSWORD_LOGIN %q must be on or off", pl))
	}
	if issuer == "" {
		for _, k := range []string{"OIDC_CLIENT_ID", "OIDC_CLIENT_SECRET", "OIDC_ALLOWED_DOMAINS"} {
			if strings.TrimSpace(getenv(k)) != "" {
				errs = append(errs, fmt.Errorf("%s is set without OIDC_ISSUER", k))
			}
		}
		if noPassword {
			errs = append(errs, errors.New("PASSWORD_LOGIN=off needs single sign-on (OIDC_ISSUER): nobody could log in"))
		}
		return nil, noPassword, errs
	}
	if u, err := url.Parse(issuer); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		errs = append(errs, fmt.Errorf("OIDC_ISSUER %q must be the provider's https URL", issuer))
	}
	oidc = &web.OIDCConfig{Issuer: issuer, ClientID: strings.TrimSpace(getenv("OIDC_CLIENT_ID")),
		ClientSecret: getenv("OIDC_CLIENT_SECRET"), Name: strings.TrimSpace(getenv("OIDC_NAME"))}
	if oidc.ClientID == "" || oidc.ClientSecret == "" {
		errs = append(errs, errors.New("OIDC_ISSUER needs OIDC_CLIENT_ID and OIDC_CLIENT_SECRET"))
	}
	for _, d := range strings.Split(getenv("OIDC_ALLOWED_DOMAINS"), ",") {
		if d = strings.ToLower(strings.TrimSpace(d)); d != "" {
			oidc.AllowedDomains = append(oidc.AllowedDomains, d)
		}
	}
	return oidc, noPassword, errs
}

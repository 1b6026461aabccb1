package main

import (
	"strings"
	"testing"
)

// Single sign-on's settings: read from the environment, checked at start.
func TestConfigOIDC(t *testing.T) {
	t.Parallel()
	env := func(kv map[string]string) func(string) string {
		return func(k string) string { return kv[k] }
	}
	o, noPw, errs := oidcFromEnv(env(map[string]string{"OIDC_ISSUER": "https://login.uni.example", "OIDC_CLIENT_ID": "closer",
		"OIDC_CLIENT_SECRET": "s3cret", "OIDC_ALLOWED_DOMAINS": " Uni.example, lab.uni.example ,", "PASSWORD_LOGIN": "off"}))
	if len(errs) != 0 || o == nil || !noPw || o.ClientID != "closer" || strings.Join(o.AllowedDomains, ",") != "uni.example,lab.uni.example" {
		t.Fatalf("a full setting: %+v, %t, %v", o, noPw, errs)
	}
	if o, noPw, errs := oidcFromEnv(env(nil)); o != nil || noPw || len(errs) != 0 {
		t.Fatalf("no setting: %+v, %t, %v", o, noPw, errs)
	}
	for name, kv := range map[string]map[string]string{
		"password off without sso": {"PASSWORD_LOGIN": "off"},
		"client without issuer":    {"OIDC_CLIENT_ID": "closer"},
		"issuer without client":    {"OIDC_ISSUER": "https://login.uni.example"},
		"issuer not a URL":         {"OIDC_ISSUER": "login", "OIDC_CLIENT_ID": "c", "OIDC_CLIENT_SECRET": "s"},
		"password maybe":           {"PASSWORD_LOGIN": "maybe"},
	} {
		if _, _, errs := oidcFromEnv(env(kv)); len(errs) == 0 {
			t.Errorf("%s: accepted", name)
		}
	}
}

package web_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/closer-lab/closer/internal/account"
	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/pgtest"
	"github.com/closer-lab/closer/internal/web"
	"golang.org/x/crypto/bcrypt"
)

// A request is logged only when Config.RequestLog asks for it; either way
// the response names its request id.
func TestRequestLogSetting(t *testing.T) {
	t.Parallel()
	pool, _ := pgtest.NewDB(t)
	store := collect.New(pool)
	accounts := account.New(pool, account.PasswordCost(bcrypt.MinCost))
	for _, on := range []bool{false, true} {
		var buf logBuffer
		srv := httptest.NewServer(web.New(store, accounts, web.Config{RequestLog: on},
			slog.New(slog.NewTextHandler(&buf, nil))))
		res, err := http.Get(srv.URL + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		srv.Close()
		if res.Header.Get("X-Request-Id") == "" {
			t.Errorf("RequestLog %v: no X-Request-Id", on)
		}
		logged := strings.Contains(buf.String(), `msg=request method=GET path=/healthz status=200`)
		if logged != on {
			t.Errorf("RequestLog %v: request logged %v\n%s", on, logged, buf.String())
		}
	}
}

package mysql

import (
	"strings"
	"testing"
	"time"
)

// TestConfig checks both spellings of a server address that --db takes, and that a bad one
// is an error saying which form was expected.
func TestConfig(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ dsn, user, passwd, addr, db string }{
		{"mysql://root@127.0.0.1:3306/test", "root", "", "127.0.0.1:3306", "test"},
		{"mariadb://u:pw@db.local/x", "u", "pw", "db.local:3306", "x"},
		{"mysql:///test", "", "", "127.0.0.1:3306", "test"},
		{"mysql://root@tcp(127.0.0.1:3307)/test", "root", "", "127.0.0.1:3307", "test"},
		{"mariadb://u:pw@tcp(h:1)/d?timeout=3s", "u", "pw", "h:1", "d"},
	} {
		cfg, err := Config(tc.dsn)
		if err != nil {
			t.Errorf("Config(%q): %v", tc.dsn, err)
			continue
		}
		if cfg.User != tc.user || cfg.Passwd != tc.passwd || cfg.Addr != tc.addr || cfg.DBName != tc.db || !cfg.InterpolateParams || cfg.Timeout == 0 {
			t.Errorf("Config(%q) = user %q passwd %q addr %q db %q interpolate %v timeout %v; want %q %q %q %q true, a timeout",
				tc.dsn, cfg.User, cfg.Passwd, cfg.Addr, cfg.DBName, cfg.InterpolateParams, cfg.Timeout, tc.user, tc.passwd, tc.addr, tc.db)
		}
	}
	if cfg, err := Config("mysql://u@tcp(h:1)/d?timeout=3s"); err != nil || cfg.Timeout != 3*time.Second {
		t.Errorf("a timeout in the DSN: %v, %v; want 3s", cfg, err)
	}
	for _, tc := range []struct{ dsn, want string }{
		{"mysql://root@tcp(127.0.0.1:3306/test", "user:password@tcp(host:port)/database"},
		{"mysql://root@127.0.0.1:33x6)/test", "mysql://user:password@host:port/database"},
	} {
		if _, err := Config(tc.dsn); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Config(%q) = %v, want an error naming %q", tc.dsn, err, tc.want)
		}
	}
}

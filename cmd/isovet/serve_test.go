package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestParseBytes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    int64
		wantErr bool
	}{
		{"0", 0, false}, {"1048576", 1 << 20, false}, {"512MiB", 512 << 20, false},
		{"2GB", 2e9, false}, {"1.5GiB", 3 << 29, false}, {"lots", 0, true}, {"-1", 0, true}, {"-2MiB", 0, true},
	}
	for _, tt := range tests {
		got, err := parseBytes(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("parseBytes(%q) = %d, %v; want %d, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestParseMaxMemory(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in      string
		want    int64
		wantErr bool
	}{
		{"auto", 0, false}, {"", 0, false}, {"none", -1, false}, {"0", -1, false}, {"0B", -1, false},
		{"2GiB", 2 << 30, false}, {"192MiB", 192 << 20, false}, {"lots", 0, true}, {"-1", 0, true},
	} {
		got, err := parseMaxMemory(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("parseMaxMemory(%q) = %d, %v; want %d, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

// TestServeRefusesExposure: serve beyond the loopback interface without a token exits with
// a usage error naming the token, before listening.
func TestServeRefusesExposure(t *testing.T) {
	t.Setenv("ISOVET_TOKEN", "")
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"serve", "--addr", "0.0.0.0:0", "--max-memory", "none"}, &out, &errOut)
	if code != exitUsage || !strings.Contains(errOut.String(), "--token") {
		t.Errorf("serve --addr 0.0.0.0:0 without a token: exit %d, stderr %q; want exit %d naming --token", code, errOut.String(), exitUsage)
	}
}

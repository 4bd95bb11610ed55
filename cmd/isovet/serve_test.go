package main

import "testing"

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

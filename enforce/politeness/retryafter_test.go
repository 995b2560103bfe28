package politeness

import (
	"testing"
	"time"
)

func TestRetryAfterParse(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	maxD := time.Duration(1<<63 - 1)
	tests := []struct {
		in     string
		want   time.Duration
		wantOK bool
	}{
		{"120", 120 * time.Second, true},
		{" 7 ", 7 * time.Second, true},
		{"0", 0, true},
		{"Sun, 22 Nov 2026 12:05:00 GMT", 5 * time.Minute, true},   // IMF-fixdate
		{"Sunday, 22-Nov-26 12:00:30 GMT", 30 * time.Second, true}, // RFC 850
		{"Sun Nov 22 12:01:00 2026", time.Minute, true},            // asctime
		{"Sun, 22 Nov 2026 11:00:00 GMT", -time.Hour, true},        // in the past
		{"99999999999999999999999", maxD, true},                    // overflows uint64
		{"9223372037", maxD, true},                                 // overflows Duration
		{"", 0, false},
		{"soon", 0, false},
		{"-5", 0, false},
		{"+5", 0, false},
		{"1.5", 0, false},
		{"12s", 0, false},
		{"2026-11-22T12:05:00Z", 0, false}, // not an HTTP-date
	}
	for _, tt := range tests {
		got, ok := parseRetryAfter(tt.in, now)
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("parseRetryAfter(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.wantOK)
		}
	}
}

func TestRetryAfterFormat(t *testing.T) {
	tests := []struct {
		in   time.Duration
		want string
	}{
		{-time.Second, "1"},
		{0, "1"},
		{time.Millisecond, "1"},
		{time.Second, "1"},
		{1001 * time.Millisecond, "2"},
		{30 * time.Second, "30"},
		{time.Duration(1<<63 - 1), "9223372037"},
	}
	for _, tt := range tests {
		if got := FormatRetryAfter(tt.in); got != tt.want {
			t.Errorf("FormatRetryAfter(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

package engine

import "testing"

func TestLockingRead(t *testing.T) {
	cases := []struct {
		query string
		want  bool
	}{
		{"SELECT bal FROM a WHERE id = 1 FOR UPDATE", true},
		{"select bal from a for share", true},
		{"SELECT bal FROM a LOCK IN SHARE MODE", true},
		{"SELECT * FROM b WHERE id IN (SELECT id FROM a FOR UPDATE)", true},
		{"SELECT bal FROM a FOR UPDATE NOWAIT", true},
		{"SELECT bal FROM a", false},
		{"SELECT 'for update' FROM a", false},
		{"SELECT /* FOR UPDATE */ bal FROM a", false},
		{"SELECT `for`, `update` FROM a", false},
		{"SELECT * FROM a FOR SYSTEM_TIME AS OF '2024-01-01'", false},
		{"UPDATE a SET bal = 1 WHERE id = 1", false},
		{"LOCK TABLES a READ", false},
	}
	for _, tc := range cases {
		if got := lockingRead(tc.query); got != tc.want {
			t.Errorf("lockingRead(%q) = %v, want %v", tc.query, got, tc.want)
		}
	}
}

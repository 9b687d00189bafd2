package planner

import "testing"

func TestRewriteForShare(t *testing.T) {
	tests := []struct{ in, want string }{
		{"SELECT * FROM t WHERE id = 1 FOR SHARE", "SELECT * FROM t WHERE id = 1 LOCK IN SHARE MODE"},
		{"select * from t for share nowait", "select * from t LOCK IN SHARE MODE"},
		{"SELECT * FROM t FOR SHARE SKIP LOCKED", "SELECT * FROM t LOCK IN SHARE MODE"},
		{"SELECT 'for share' FROM t FOR UPDATE", "SELECT 'for share' FROM t FOR UPDATE"},
		{"SELECT `for`, share FROM t", "SELECT `for`, share FROM t"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) { checkRewrite(t, tt.in, tt.want) })
	}
}

package engine_test

import "testing"

// TestRowLevelCommitValidation races a transaction's row-level change
// against a commit made by another session between the transaction's read
// and its COMMIT, deterministically: which races conflict (1213, nothing
// of the transaction committed) and which both succeed.
func TestRowLevelCommitValidation(t *testing.T) {
	cases := []struct {
		name      string
		props     string
		mine      string // the transaction's statement
		theirs    string // committed by the other session before COMMIT
		conflicts bool
		want      string // ids and values after both
	}{
		{"insert racing a delete", "", "DELETE FROM c.t WHERE id = 1", "INSERT INTO c.t VALUES (5, 0)", false, "2:0 3:0 5:0"},
		{"delete racing a delete of the same file", "", "DELETE FROM c.t WHERE id = 1", "DELETE FROM c.t WHERE id = 2", true, "1:0 3:0"},
		{"update racing an update of the same row", "", "UPDATE c.t SET v = 1 WHERE id = 1", "UPDATE c.t SET v = 2 WHERE id = 1", true, "1:2 2:0 3:0"},
		{"merge-on-read updates of the same file", "'write.update.mode'='merge-on-read'", "UPDATE c.t SET v = 1 WHERE id = 1", "UPDATE c.t SET v = 2 WHERE id = 2", true, "1:0 2:2 3:0"},
		{"insert a serializable delete may match", "", "DELETE FROM c.t WHERE id >= 1", "INSERT INTO c.t VALUES (5, 0)", true, "1:0 2:0 3:0 5:0"},
		{"the same under snapshot isolation", "'write.delete.isolation-level'='snapshot'", "DELETE FROM c.t WHERE id >= 1", "INSERT INTO c.t VALUES (5, 0)", false, "5:0"},
		{"v3: deletion vectors of the same file", "'format-version'='3', 'write.delete.mode'='merge-on-read'", "DELETE FROM c.t WHERE id = 1", "DELETE FROM c.t WHERE id = 2", true, "1:0 3:0"},
		{"v3: insert racing a merge-on-read delete", "'format-version'='3', 'write.delete.mode'='merge-on-read'", "DELETE FROM c.t WHERE id = 1", "INSERT INTO c.t VALUES (5, 0)", false, "2:0 3:0 5:0"},
		{"v3: copy-on-write changes of the same file", "'format-version'='3'", "UPDATE c.t SET v = 1 WHERE id = 1", "DELETE FROM c.t WHERE id = 3", true, "1:0 2:0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			conn := raceCommit(t, tc.props, nil, tc.mine, tc.theirs, tc.conflicts)
			if got := idValues(t, conn, "c.t"); got != tc.want {
				t.Errorf("rows: got %s, want %s", got, tc.want)
			}
		})
	}
}

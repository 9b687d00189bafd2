package engine_test

import "testing"

// TestOverwriteInTransactionValidation races an INSERT OVERWRITE staged in
// a transaction against a commit another session makes before the COMMIT:
// a commit into what the overwrite replaces, or of a file it removes, is a
// conflict (1213, nothing of the transaction committed); one elsewhere is
// not.
func TestOverwriteInTransactionValidation(t *testing.T) {
	cases := []struct {
		name      string
		mine      []string // after BEGIN
		theirs    string
		conflicts bool
		want      string // ids and values (v = partition) after both
	}{
		{"insert into the overwritten partition", []string{"INSERT OVERWRITE c.t PARTITION (v = 1) VALUES (10)"}, "INSERT INTO c.t VALUES (5, 1)", true, "1:1 2:1 3:2 5:1"},
		{"insert into another partition", []string{"INSERT OVERWRITE c.t PARTITION (v = 1) VALUES (10)"}, "INSERT INTO c.t VALUES (5, 2)", false, "3:2 5:2 10:1"},
		{"insert racing a whole-table overwrite", []string{"INSERT OVERWRITE c.t VALUES (10, 3)"}, "INSERT INTO c.t VALUES (5, 2)", true, "1:1 2:1 3:2 5:2"},
		{"delete of a file the overwrite removes", []string{"INSERT OVERWRITE c.t PARTITION (v = 2) VALUES (10)"}, "DELETE FROM c.t WHERE id = 3", true, "1:1 2:1"},
		{"dynamic overwrite racing any insert", []string{"SET spark.sql.sources.partitionOverwriteMode = dynamic", "INSERT OVERWRITE c.t VALUES (10, 1)"}, "INSERT INTO c.t VALUES (5, 2)", true, "1:1 2:1 3:2 5:2"},
		{"overwrite of nothing committed", []string{"INSERT OVERWRITE c.t PARTITION (v = 9) VALUES (10)"}, "INSERT INTO c.t VALUES (5, 9)", true, "1:1 2:1 3:2 5:9"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mine := raceCommit(t, []string{"CREATE DATABASE c", "CREATE TABLE c.t (id BIGINT, v BIGINT) PARTITIONED BY (v)",
				"INSERT INTO c.t VALUES (1, 1), (2, 1), (3, 2)"}, tc.mine, tc.theirs, tc.conflicts)
			if got := idValues(t, mine, "c.t"); got != tc.want {
				t.Errorf("rows: got %s, want %s", got, tc.want)
			}
		})
	}
}

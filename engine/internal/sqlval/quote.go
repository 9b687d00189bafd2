package sqlval

import "strings"

// QuoteIdent is s as a MySQL identifier in backquotes.
func QuoteIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

// QuoteString is s as a string literal, as MySQL's SHOW CREATE TABLE
// quotes comments: quotes doubled, backslashes and line breaks escaped, so
// the literal stays on its line.
func QuoteString(s string) string {
	return "'" + stringEscaper.Replace(s) + "'"
}

var stringEscaper = strings.NewReplacer(`\`, `\\`, `'`, `''`, "\n", `\n`, "\r", `\r`, "\x00", `\0`, "\x1a", `\Z`)

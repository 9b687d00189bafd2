// Runs clients/script.json through Node's mysql2, as `make clients` does.
// Usage: node mysql2_client.js query|execute HOST:PORT SCRIPT
//   query:   conn.query, parameters escaped into the text by the driver
//   execute: conn.execute for statements that read or write rows, which
//            prepares them on the server (COM_STMT_PREPARE, COM_STMT_EXECUTE)
// Prints one line per step: "ok NAME: step" or "FAIL NAME: step: why".
'use strict';

const fs = require('fs');
const mysql = require('mysql2/promise');

function text(v) {
  if (v === null || v === undefined) return null;
  if (Buffer.isBuffer(v)) return v.toString('utf8');
  return String(v);
}

function isQuery(sql) {
  return ['SELECT', 'SHOW', 'DESCRIBE', 'DESC', 'WITH'].includes(sql.trim().split(' ')[0].toUpperCase());
}

function prepared(sql) {
  return ['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'REPLACE', 'WITH'].includes(sql.trim().split(' ')[0].toUpperCase());
}

function compare(step, got, db) {
  if (step.contains !== undefined) {
    if (got.some((r) => r.some((v) => v !== null && v.includes(step.contains)))) return null;
    return `no value contains ${JSON.stringify(step.contains)}: ${JSON.stringify(got)}`;
  }
  if (step.rows === undefined) return null;
  if (step.cols !== undefined) got = got.map((r) => step.cols.map((c) => (c < r.length ? r[c] : null)));
  const want = step.rows.map((r) => r.map((v) => (v === null ? null : v.split('{db}').join(db))));
  if (JSON.stringify(got) !== JSON.stringify(want)) return `got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`;
  return null;
}

async function main() {
  const [mode, addr, script] = process.argv.slice(2);
  const name = `mysql2-${mode}`;
  const [host, port] = addr.split(':');
  const steps = JSON.parse(fs.readFileSync(script, 'utf8')).steps;
  const conn = await mysql.createConnection({
    host, port: Number(port), user: 'root', password: '',
    dateStrings: true, supportBigNumbers: true, bigNumberStrings: true, rowsAsArray: true,
    // JSON as the server sends it, not parsed into objects
    typeCast: (field, next) => (field.type === 'JSON' ? field.string('utf8') : next()),
  });
  const db = `clients_mysql2_${mode}`;
  for (const step of steps) {
    let err = null;
    try {
      err = await runStep(conn, mode, step, db);
    } catch (e) {
      err = `${e.code || e.name}: ${e.message}`;
    }
    console.log(err === null ? `ok ${name}: ${step.name}` : `FAIL ${name}: ${step.name}: ${err}`);
  }
  await conn.end();
}

async function runStep(conn, mode, step, db) {
  switch (step.tx) {
    case undefined: break;
    case 'begin': await conn.beginTransaction(); return null;
    case 'commit': await conn.commit(); return null;
    case 'rollback': await conn.rollback(); return null;
    case 'autocommit_off': await conn.query('SET autocommit = 0'); return null;
    case 'autocommit_on': await conn.query('SET autocommit = 1'); return null;
    default: return `unknown tx ${step.tx}`;
  }
  const sql = step.sql.split('{db}').join(db);
  const params = step.params;
  let result;
  try {
    if (mode === 'execute' && prepared(sql)) {
      [result] = await conn.execute(sql, params || []);
    } else {
      [result] = await conn.query(sql, params);
    }
  } catch (e) {
    if (step.error !== undefined && e.errno === step.error) return null;
    throw e;
  }
  if (step.error !== undefined) return `want error ${step.error}, got success`;
  if (Array.isArray(result)) {
    return compare(step, result.map((r) => r.map(text)), db);
  }
  if (step.affected !== undefined && result.affectedRows !== step.affected) {
    return `${result.affectedRows} rows affected, want ${step.affected}`;
  }
  return null;
}

main().catch((e) => {
  console.log(`FAIL mysql2: the client: ${e.stack || e}`);
  process.exit(1);
});

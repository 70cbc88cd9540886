-- bench/check.sh's second sqlite3 script: SQL features beyond the timed workload, whose output each checked
-- build must print exactly as the native build does, with no report.
CREATE TABLE emp(id INTEGER PRIMARY KEY, name TEXT NOT NULL, dept TEXT, salary REAL, boss INTEGER, photo BLOB);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000)
INSERT INTO emp(name, dept, salary, boss, photo)
  SELECT printf('emp%05d-%s', i, substr('abcdefghijklmnopqrstuvwxyz', i % 26 + 1, i % 7 + 1)),
         CASE i % 5 WHEN 0 THEN 'sales' WHEN 1 THEN 'eng' WHEN 2 THEN 'ops' WHEN 3 THEN 'hr' ELSE NULL END,
         1000 + (i * 7919) % 5000 + i / 3.0, CASE WHEN i > 1 THEN i / 2 END, zeroblob(i % 40)
  FROM n;
CREATE INDEX emp_dept ON emp(dept, salary DESC);
CREATE TABLE log(id INTEGER PRIMARY KEY, what TEXT);
CREATE TRIGGER emp_raise AFTER UPDATE OF salary ON emp
  BEGIN INSERT INTO log(what) VALUES (old.name || ': ' || old.salary || ' -> ' || new.salary); END;
UPDATE emp SET salary = salary * 1.1 WHERE dept = 'eng' AND id % 97 = 0;
DELETE FROM emp WHERE id % 211 = 0;
SELECT count(*), sum(length(photo)), hex(substr(max(photo), 1, 4)) FROM emp;
SELECT dept, count(*), round(avg(salary), 2), min(name), max(name) FROM emp GROUP BY dept ORDER BY dept NULLS FIRST;
SELECT name, dept, salary, rank() OVER (PARTITION BY dept ORDER BY salary DESC) AS r,
       round(sum(salary) OVER (PARTITION BY dept ORDER BY id ROWS BETWEEN 2 PRECEDING AND CURRENT ROW), 2)
  FROM emp WHERE id % 250 = 1 ORDER BY dept, r;
WITH RECURSIVE chain(id, depth, path) AS (SELECT 2999, 0, '2999'
  UNION ALL SELECT e.boss, depth + 1, path || '>' || e.boss FROM emp e JOIN chain c ON e.id = c.id WHERE e.boss IS NOT NULL)
SELECT max(depth), max(path) FROM chain;
SELECT group_concat(upper(substr(name, 1, 8)), ',') FROM (SELECT name FROM emp WHERE name LIKE '%-abc%' ORDER BY name LIMIT 12);
SELECT count(*) FROM emp WHERE name GLOB 'emp0[0-4]*' AND instr(name, 'e') > 0;
SELECT replace(trim('  padded  text  '), ' ', '_'), ltrim('xxabc', 'x'), quote('it''s'), unicode('é'), char(72, 105);
SELECT json_object('n', count(*), 'depts', json_group_array(DISTINCT dept)) FROM emp WHERE dept IS NOT NULL;
SELECT json_extract('{"a":[1,2,{"b":"deep"}]}', '$.a[2].b'), json_array_length('[1,2,3,4]');
SELECT value, count(*) FROM emp, json_each('["sales","eng"]') WHERE emp.dept = json_each.value GROUP BY value;
SELECT count(*), min(what), max(what) FROM log;
SELECT a.dept, b.dept, count(*) FROM emp a JOIN emp b ON a.boss = b.id WHERE a.id < 600 GROUP BY 1, 2 ORDER BY 3 DESC LIMIT 4;
SELECT printf('%10.3f|%-8s|%x|%e', 3.14159, 'left', 255, 12345.678), typeof(1), typeof(1.5), typeof('x'), typeof(x'00');
SELECT id, name FROM emp WHERE id IN (SELECT boss FROM emp WHERE salary > 5900) ORDER BY id DESC LIMIT 3;
CREATE VIEW rich AS SELECT * FROM emp WHERE salary > 5500;
SELECT count(*), total(salary) FROM rich;
SELECT name FROM emp ORDER BY name COLLATE NOCASE DESC LIMIT 2;

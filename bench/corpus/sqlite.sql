-- bench/corpus.sh's sqlite3 workload: a small shop's database made by recursive queries (1,000 customers,
-- 1,000 products, 8,000 orders, 40,000 order lines), two indexes, then the queries a report runs: joins,
-- grouping, ordering, a window function, a correlated subquery (through the index on orders.customer: without
-- it, a scan of the orders per customer was nine tenths of the earlier workload's 0.1 s and 542 M accesses)
-- and LIKE. About 0.06 s of CPU natively (-O2), spread over the inserts, the indexes and the queries. Prints the
-- same rows on every build.
CREATE TABLE customer(id INTEGER PRIMARY KEY, name TEXT, city TEXT);
CREATE TABLE product(id INTEGER PRIMARY KEY, name TEXT, price REAL);
CREATE TABLE orders(id INTEGER PRIMARY KEY, customer INTEGER, day INTEGER);
CREATE TABLE line(orderid INTEGER, product INTEGER, qty INTEGER);
BEGIN;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000)
  INSERT INTO customer SELECT i, 'customer' || i, 'city' || (i * 7 % 53) FROM n;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000)
  INSERT INTO product SELECT i, 'product' || (i * 31 % 1000), (i * 37 % 1000) / 10.0 FROM n;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 8000)
  INSERT INTO orders SELECT i, 1 + (i * i % 1000), i % 365 FROM n;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 40000)
  INSERT INTO line SELECT 1 + (i * 104729 % 8000), 1 + (i * 1299709 % 1000), 1 + i % 5 FROM n;
COMMIT;
CREATE INDEX line_order ON line(orderid);
CREATE INDEX orders_customer ON orders(customer);
SELECT c.city, count(DISTINCT o.id), round(sum(l.qty * p.price), 2) AS total
  FROM customer c JOIN orders o ON o.customer = c.id JOIN line l ON l.orderid = o.id JOIN product p ON p.id = l.product
  GROUP BY c.city ORDER BY total DESC LIMIT 5;
SELECT name, rank FROM (SELECT p.name, row_number() OVER (ORDER BY sum(l.qty * p.price) DESC, p.id) AS rank
  FROM product p JOIN line l ON l.product = p.id GROUP BY p.id) WHERE rank <= 3;
SELECT count(*) FROM customer c WHERE (SELECT count(*) FROM orders o WHERE o.customer = c.id) > 3;
SELECT count(*), min(name) FROM product WHERE name LIKE '%7%';

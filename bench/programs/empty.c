/* Does nothing: memtrace's fixed cost (JVM start, agent start-up, symbol loading) measured on it. */
int main(void) { return 0; }

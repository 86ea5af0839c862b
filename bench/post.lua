-- wrk: every request a POST of $BENCH_BODY (JSON).
wrk.method = "POST"
wrk.body = os.getenv("BENCH_BODY")

module ctxprof.test/httpload

go 1.19

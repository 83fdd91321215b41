:INPUT
-m statistic --mode nth ! --every 10 --packet 3;=;OK
-m statistic --mode random --probability 0.25000000000;=;OK

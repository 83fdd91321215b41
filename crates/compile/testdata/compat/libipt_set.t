:INPUT,FORWARD,OUTPUT
%ipset create nfk hash:ip family inet
%ipset create nfkn hash:net,port family inet
-m set --match-set nfk src;=;OK
-m set ! --match-set nfk dst,src;=;OK
-m set --match-set nfkn src,dst --return-nomatch ! --update-counters ! --update-subcounters;=;OK
-m set --match-set nfk src ! --packets-eq 5 --bytes-gt 100;=;OK
-m set --match-set nfk src --packets-lt 5 --bytes-lt 1000;=;OK
-m set --match-set nfk src --packets-gt 1 ! --bytes-eq 7;=;OK

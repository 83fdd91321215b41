:INPUT,FORWARD,OUTPUT
%ipset create nfk6 hash:ip family inet6
%ipset create nfkn6 hash:net,port family inet6
-m set --match-set nfk6 src;=;OK
-m set ! --match-set nfk6 dst,src;=;OK
-m set --match-set nfkn6 src,dst --return-nomatch ! --update-counters ! --update-subcounters;=;OK
-m set --match-set nfk6 src ! --packets-eq 5 --bytes-gt 100;=;OK
-m set --match-set nfk6 src --packets-lt 5 --bytes-lt 1000;=;OK
-m set --match-set nfk6 src --packets-gt 1 ! --bytes-eq 7;=;OK

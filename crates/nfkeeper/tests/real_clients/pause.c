/* The one program of the real-clients test's container image: waits for a
   signal, so `docker run -d` has something that keeps running. */
#include <unistd.h>

int main(void)
{
    for (;;)
        pause();
}

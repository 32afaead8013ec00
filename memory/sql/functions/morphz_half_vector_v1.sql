-- A float16 (little-endian, as numpy stores it) decoded exactly: sign, exponent, mantissa.
CREATE OR REPLACE FUNCTION morphz_half_vector(b bytea) RETURNS vector
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
SELECT CASE WHEN octet_length(b) > 1 THEN ARRAY(
  SELECT ((CASE WHEN (get_byte(b, 2 * i + 1) >> 2) & 31 = 0
            THEN (((get_byte(b, 2 * i + 1) & 3) << 8) | get_byte(b, 2 * i)) * 2 ^ -24
            ELSE (1024 + (((get_byte(b, 2 * i + 1) & 3) << 8) | get_byte(b, 2 * i)))
                 * 2 ^ (((get_byte(b, 2 * i + 1) >> 2) & 31) - 25) END)
          * (1 - 2 * (get_byte(b, 2 * i + 1) >> 7)))::real
  FROM generate_series(0, octet_length(b) / 2 - 1) AS i ORDER BY i)::vector END
$$
